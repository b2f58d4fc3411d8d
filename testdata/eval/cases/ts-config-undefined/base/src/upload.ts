const MAX_BYTES = 10 * 1024 * 1024;

export function checkUpload(size: number): void {
  if (size > MAX_BYTES) {
    throw new Error("file too large");
  }
}
