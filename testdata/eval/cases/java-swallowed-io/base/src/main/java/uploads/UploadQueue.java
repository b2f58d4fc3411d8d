package uploads;

import java.util.ArrayDeque;
import java.util.Deque;

public class UploadQueue {
    private final Deque<String> pending = new ArrayDeque<>();

    public synchronized void add(String path) {
        pending.add(path);
    }
}
