export function autosave(save: (text: string) => void) {
  return (text: string) => save(text);
}
