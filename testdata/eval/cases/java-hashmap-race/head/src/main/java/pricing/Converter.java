package pricing;

import java.util.HashMap;
import java.util.Map;

/** Converts amounts; shared by every request thread. */
public class Converter {
    private final RateClient rates;
    private final Map<String, Double> cache = new HashMap<>();

    public Converter(RateClient rates) {
        this.rates = rates;
    }

    public double convert(double amount, String from, String to) {
        String key = from + ":" + to;
        Double rate = cache.get(key);
        if (rate == null) {
            rate = rates.fetch(from, to);
            cache.put(key, rate);
        }
        return amount * rate;
    }
}
