package mail;

import java.io.BufferedReader;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.stream.Collectors;

public final class Templates {
    private Templates() {}

    public static String load(String name) throws IOException {
        InputStream in = Templates.class.getResourceAsStream("/templates/" + name);
        if (in == null) {
            throw new FileNotFoundException("no template " + name);
        }
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            return r.lines().collect(Collectors.joining("\n"));
        }
    }
}
