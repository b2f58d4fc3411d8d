package cart;

public class Checkout {
    private static final double LOYALTY_PERCENT = 15;

    public long total(long subtotalCents, boolean loyal) {
        return loyal ? Pricing.applyDiscount(subtotalCents, LOYALTY_PERCENT) : subtotalCents;
    }
}
