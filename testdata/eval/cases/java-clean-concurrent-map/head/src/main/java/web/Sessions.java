package web;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

public class Sessions {
    private final Map<String, Session> byId = new ConcurrentHashMap<>();

    public Optional<Session> get(String id) {
        return Optional.ofNullable(byId.get(id));
    }

    public void put(Session s) {
        byId.put(s.id(), s);
    }
}
