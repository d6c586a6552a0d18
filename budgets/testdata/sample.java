package demo;

import org.junit.jupiter.api.Test;

/**
 * A calculator.
 */
public class Calc {
    // plain comment
    private int total; // trailing

    /** Adds a value. */
    public int add(int v) {
        /* block */
        total += v;
        return total;
    }

    @Test
    void addWorks() {
        String s = """
            text block
            """;
        assert new Calc().add(2) == 2;
    }
}
