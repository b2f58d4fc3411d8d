export interface Feature {
  enabled: boolean;
  limit?: number;
}

const features: Record<string, Feature> = {
  exports: { enabled: true },
  sso: { enabled: false },
};

/** Returns the feature, or undefined when it is not configured for the plan. */
export function feature(name: string): Feature | undefined {
  return features[name];
}
