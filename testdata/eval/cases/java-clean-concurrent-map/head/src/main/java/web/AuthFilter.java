package web;

public class AuthFilter {
    private final Sessions sessions;

    public AuthFilter(Sessions sessions) {
        this.sessions = sessions;
    }

    public boolean allowed(String sessionId) {
        return sessionId != null && sessions.get(sessionId).isPresent();
    }
}
