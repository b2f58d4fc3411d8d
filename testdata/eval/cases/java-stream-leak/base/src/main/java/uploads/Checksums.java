package uploads;

public final class Checksums {
    private Checksums() {}
}
