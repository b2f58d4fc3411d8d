package inventory;

import java.util.Map;

public class Sync {
    private final Store store;

    public Sync(Store store) {
        this.store = store;
    }

    /** Writes the quantities that differ from the local ones. */
    public int apply(Map<String, Integer> local, Map<String, Integer> remote) {
        int written = 0;
        for (Map.Entry<String, Integer> e : remote.entrySet()) {
            Integer mine = local.get(e.getKey());
            if (mine != e.getValue()) {
                store.write(e.getKey(), e.getValue());
                written++;
            }
        }
        return written;
    }
}
