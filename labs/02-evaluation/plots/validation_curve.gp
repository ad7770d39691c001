# validation_curve.gp — lab 02: validation macro-F1 and accuracy for each
# lambda of the grid, the chosen one marked. The grid is drawn evenly spaced
# (lambda = 0 has no place on a log axis). Variables: data (metrics.csv);
# test_acc (%), test_f1, test_rows: the chosen model's one test score, given
# in the title as the report's headline gives it.
chosen_lambda = NaN
chosen_f1 = NaN
stats data using (column("chosen") > 0 ? (chosen_lambda = column("lambda"), chosen_f1 = column("val_macro_f1")) : 0) \
    name "C" nooutput
first_f1 = first_lambda = NaN
stats data using (column("lambda_index") == 0 ? (first_lambda = column("lambda"), first_f1 = column("val_macro_f1")) \
                                              : 0) name "F" nooutput
# (left: little L2, a model that fits the noise; right: too much, a model too
# simple: the caption says it, at a size that reads)
set title sprintf("Validation curve: λ is chosen on validation data\n%s", \
    sub(exists("test_acc") ? sprintf("test split, scored once (chosen λ only): accuracy %.1f%%, macro-F1 %.3f", \
                                     test_acc, test_f1) \
                           : "the test split is scored once, for the chosen λ only"))
set xlabel 'L2 strength λ (the grid, evenly spaced)'
set ylabel 'validation score (macro-F1 or accuracy)'
set offsets 0.3, 0.3, 0, 0
eval key_below(3)
plot data using "lambda_index":"val_macro_f1":xtic(sprintf('%g', column("lambda"))) with linespoints ls 1 \
          title 'macro-F1', \
     data using "lambda_index":"val_accuracy" with linespoints ls 2 title 'accuracy', \
     data using "lambda_index":(column("chosen") > 0 ? column("val_macro_f1") : 1/0) with points ls 3 pt 7 ps 2 \
          title sprintf("chosen: λ = %g, macro-F1 %.4f%s", chosen_lambda, chosen_f1, chosen_lambda == first_lambda ? \
                        "" : sprintf(" (λ = %g: %.4f)", first_lambda, first_f1))
