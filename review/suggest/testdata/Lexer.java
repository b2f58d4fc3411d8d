package lex;

public class Lexer {
    private final String src;

    public Lexer(String src) {
        this.src = src;
    }

    public int length() {
        return src.length();
    }
}
