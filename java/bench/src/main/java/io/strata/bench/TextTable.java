package io.strata.bench;

import java.util.ArrayList;
import java.util.List;

/** A plain-text table: columns padded to their widest cell, numbers right-aligned. */
final class TextTable {
  private final List<String[]> lines = new ArrayList<>();
  private final int columns;
  private final boolean lastLeft;

  /** A table whose last column is free text (left-aligned) if {@code lastLeft}. */
  TextTable(boolean lastLeft, String... header) {
    this.columns = header.length;
    this.lastLeft = lastLeft;
    lines.add(header);
  }

  void add(String... cells) {
    if (cells.length != columns) {
      throw new IllegalArgumentException(cells.length + " cells for " + columns + " columns");
    }
    lines.add(cells);
  }

  String render() {
    int[] width = new int[columns];
    for (String[] l : lines) {
      for (int c = 0; c < columns; c++) {
        width[c] = Math.max(width[c], l[c].length());
      }
    }
    StringBuilder b = new StringBuilder();
    for (String[] l : lines) {
      StringBuilder line = new StringBuilder();
      for (int c = 0; c < columns; c++) {
        String pad = " ".repeat(width[c] - l[c].length());
        boolean left = c == 0 || (lastLeft && c == columns - 1);
        line.append(c == 0 ? "" : "  ").append(left ? l[c] + pad : pad + l[c]);
      }
      b.append(line.toString().stripTrailing()).append('\n');
    }
    return b.toString();
  }
}
