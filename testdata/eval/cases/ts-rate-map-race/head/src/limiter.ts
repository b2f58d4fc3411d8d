import { store } from "./store";

const attempts = new Map<string, number>();

export async function recordAttempt(ip: string): Promise<number> {
  const current = attempts.get(ip) ?? (await store.get(`attempts:${ip}`)) ?? 0;
  await store.set(`attempts:${ip}`, current + 1);
  attempts.set(ip, current + 1);
  return current + 1;
}
