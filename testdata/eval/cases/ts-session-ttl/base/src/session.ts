export interface Session {
  userId: string;
  expiresAt: number;
}

/** Creates a session that lives ttlSeconds. */
export function createSession(userId: string, ttlSeconds: number): Session {
  return { userId, expiresAt: Date.now() + ttlSeconds * 1000 };
}
