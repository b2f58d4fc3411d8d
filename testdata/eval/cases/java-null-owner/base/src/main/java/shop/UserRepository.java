package shop;

import java.util.Map;

public class UserRepository {
    private final Map<String, User> byEmail;

    public UserRepository(Map<String, User> byEmail) {
        this.byEmail = byEmail;
    }

    /** Returns the user with this email, or null when there is none. */
    public User findByEmail(String email) {
        return byEmail.get(email.toLowerCase());
    }
}
