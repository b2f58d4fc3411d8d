import { feature } from "./features";

export function checkUpload(size: number): void {
  const max = feature("uploads")!.limit ?? 10 * 1024 * 1024;
  if (size > max) {
    throw new Error("file too large");
  }
}
