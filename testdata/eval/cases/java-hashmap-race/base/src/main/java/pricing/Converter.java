package pricing;

public class Converter {
    private final RateClient rates;

    public Converter(RateClient rates) {
        this.rates = rates;
    }

    public double convert(double amount, String from, String to) {
        return amount * rates.fetch(from, to);
    }
}
