export class StatusPoller {
  constructor(private fetchStatus: () => Promise<string>, private onStatus: (s: string) => void) {}

  async refresh(): Promise<void> {
    this.onStatus(await this.fetchStatus());
  }
}
