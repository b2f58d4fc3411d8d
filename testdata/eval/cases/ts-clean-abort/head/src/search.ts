let inflight: AbortController | undefined;

export async function search(q: string): Promise<string[]> {
  inflight?.abort();
  const controller = new AbortController();
  inflight = controller;
  const res = await fetch(`/api/search?q=${encodeURIComponent(q)}`, { signal: controller.signal });
  if (!res.ok) {
    throw new Error(`search failed: ${res.status}`);
  }
  return res.json();
}
