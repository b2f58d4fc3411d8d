package mail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.stream.Collectors;

public final class Templates {
    private Templates() {}

    public static String load(String name) throws IOException {
        BufferedReader r = new BufferedReader(new InputStreamReader(
            Templates.class.getResourceAsStream("/templates/" + name), StandardCharsets.UTF_8));
        String text = r.lines().collect(Collectors.joining("\n"));
        r.close();
        return text;
    }
}
