export type Point = { day: string; value: number };

export function total(points: Point[]): number {
  return points.reduce((s, p) => s + p.value, 0);
}
