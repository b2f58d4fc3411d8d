package pricing;

import java.util.ArrayList;
import java.util.List;

public class PriceImporter {
    /** Parses the rows after the header line. */
    public List<Price> parse(List<String> lines) {
        List<Price> out = new ArrayList<>();
        for (int i = 2; i < lines.size(); i++) {
            String[] cols = lines.get(i).split(",");
            out.add(new Price(cols[0], Long.parseLong(cols[1])));
        }
        return out;
    }
}
