export const HIDDEN_TAGS = ["internal", "beta", "staff-only"];

export function publicTags(tags: string[]): string[] {
  return tags.filter((t) => !(HIDDEN_TAGS.indexOf(t) > 0));
}
