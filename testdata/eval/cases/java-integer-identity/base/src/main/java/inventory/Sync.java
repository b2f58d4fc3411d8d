package inventory;

import java.util.Map;

public class Sync {
    private final Store store;

    public Sync(Store store) {
        this.store = store;
    }

    public void apply(Map<String, Integer> remote) {
        remote.forEach(store::write);
    }
}
