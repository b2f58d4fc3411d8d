export type Point = { day: string; value: number };

export function total(points: Point[]): number {
  return points.reduce((s, p) => s + p.value, 0);
}

/** Moving average over window points, one value per complete window. */
export function movingAverage(points: Point[], window: number): Point[] {
  const out: Point[] = [];
  for (let end = window; end <= points.length; end++) {
    let sum = 0;
    for (let i = end - window; i <= end; i++) {
      sum += points[i].value;
    }
    out.push({ day: points[end - 1].day, value: sum / window });
  }
  return out;
}
