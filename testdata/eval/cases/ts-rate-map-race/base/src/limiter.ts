const attempts = new Map<string, number>();

export function recordAttempt(ip: string): number {
  const n = (attempts.get(ip) ?? 0) + 1;
  attempts.set(ip, n);
  return n;
}
