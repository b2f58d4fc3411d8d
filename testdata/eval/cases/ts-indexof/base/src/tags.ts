export function publicTags(tags: string[]): string[] {
  return tags;
}
