# learning_curve.gp — lab 02: training loss per epoch for each lambda.
# Variables: data (learning.csv), n (number of lambdas).
set title sprintf("Softmax regression: training loss per epoch\n%s", sub("mean over the epoch's mini-batches; larger lambda, higher floor"))
set xlabel 'epoch'
set ylabel 'training loss (cross-entropy + penalty)'
set key outside right top vertical
plot for [k=2:n+1] data using 1:k with linespoints title columnhead(k)
