package web;

import java.util.HashMap;
import java.util.Map;

public class Sessions {
    private final Map<String, Session> byId = new HashMap<>();

    public Session get(String id) {
        return byId.get(id);
    }

    public void put(Session s) {
        byId.put(s.id(), s);
    }
}
