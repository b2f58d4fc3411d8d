import threading
import time


class Limiter:
    def __init__(self, rate, burst):
        self.rate, self.burst = rate, burst
        self.tokens = {}
        self.stamp = {}
        self.lock = threading.Lock()

    def allow(self, key):
        with self.lock:
            now = time.monotonic()
            tokens = min(self.burst, self.tokens.get(key, self.burst) + (now - self.stamp.get(key, now)) * self.rate)
            self.stamp[key] = now
            if tokens < 1:
                self.tokens[key] = tokens
                return False
            self.tokens[key] = tokens - 1
            return True
