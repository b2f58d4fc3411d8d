package cart;

public final class Pricing {
    private Pricing() {}

    /** Applies a discount given as a fraction (0-1) to cents. */
    public static long applyDiscount(long cents, double fraction) {
        return Math.round(cents * (1 - fraction));
    }
}
