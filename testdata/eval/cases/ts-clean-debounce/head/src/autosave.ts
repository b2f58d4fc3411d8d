export function autosave(save: (text: string) => void, delayMs = 800) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return (text: string) => {
    if (timer !== undefined) {
      clearTimeout(timer);
    }
    timer = setTimeout(() => {
      timer = undefined;
      save(text);
    }, delayMs);
  };
}
