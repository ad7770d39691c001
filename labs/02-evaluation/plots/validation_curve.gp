# validation_curve.gp — lab 02: validation macro-F1 and accuracy for each lambda.
# Variables: data (metrics.csv).
set title sprintf("Validation curve: lambda is chosen on validation data\n%s", sub("the test split is scored once, for the chosen lambda only"))
set xlabel 'L2 strength lambda'
set ylabel 'validation score'
set key bottom left
set offsets 0.3, 0.3, 0, 0
plot data using "lambda_index":"val_macro_f1":xtic(sprintf('%g', column("lambda"))) with linespoints ls 1 title 'macro-F1', \
     data using "lambda_index":"val_accuracy" with linespoints ls 2 title 'accuracy', \
     data using "lambda_index":(column("chosen") > 0 ? column("val_macro_f1") : 1/0) with points ls 3 pt 7 ps 2 title 'chosen'
