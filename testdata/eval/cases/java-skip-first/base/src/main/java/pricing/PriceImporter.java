package pricing;

import java.util.ArrayList;
import java.util.List;

public class PriceImporter {
    public List<Price> parse(List<String> lines) {
        List<Price> out = new ArrayList<>();
        for (String line : lines) {
            String[] cols = line.split(",");
            out.add(new Price(cols[0], Long.parseLong(cols[1])));
        }
        return out;
    }
}
