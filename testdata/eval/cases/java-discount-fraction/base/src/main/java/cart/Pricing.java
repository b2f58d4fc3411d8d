package cart;

public final class Pricing {
    private Pricing() {}

    /** Applies a discount given in percent (0-100) to cents. */
    public static long applyDiscount(long cents, double percent) {
        return Math.round(cents * (1 - percent / 100));
    }
}
