package io.csi4j.cli;

public final class Main {
    public static void main(String[] args) {
        System.out.println("csi4j");
    }
}
