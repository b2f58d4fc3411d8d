package uploads;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;

public class UploadQueue {
    private final Deque<String> pending = new ArrayDeque<>();

    public synchronized void add(String path) {
        pending.add(path);
    }

    /** Writes the pending uploads to file, one per line. */
    public synchronized void persist(Path file) {
        try {
            Files.write(file, pending);
        } catch (IOException e) {
        }
        pending.clear();
    }
}
