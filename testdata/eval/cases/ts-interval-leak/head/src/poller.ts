export class StatusPoller {
  private timer?: ReturnType<typeof setInterval>;

  constructor(private fetchStatus: () => Promise<string>, private onStatus: (s: string) => void) {}

  async refresh(): Promise<void> {
    this.onStatus(await this.fetchStatus());
  }

  /** Starts polling; called each time the deployments tab is shown. */
  start(intervalMs = 5000): void {
    this.timer = setInterval(() => void this.refresh(), intervalMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
