# amp_compare.gp — lab 05 part 2: the same training in fp32, in fp16 with the
# loss scaler, in fp16 with the scale stuck at 1 (the story's mistake), and in bf16.
# Variables: fp32, amp, noscale, bf16 (each a metrics.csv: epoch, loss, val_accuracy).
set multiplot layout 1,2 title "Lab 05: fp32 vs AMP (fp16 + scaler) vs fp16 without loss scaling vs bf16"
set xlabel 'epoch'
set ylabel 'training loss'
set key top right
plot fp32 using "epoch":"loss" with linespoints ls 1 title 'fp32', \
     amp using "epoch":"loss" with linespoints ls 2 title 'fp16 + loss scaler', \
     noscale using "epoch":"loss" with linespoints ls 3 title 'fp16, scale 1', \
     bf16 using "epoch":"loss" with linespoints ls 4 title 'bf16'
set ylabel 'validation accuracy'
set key bottom right
plot fp32 using "epoch":"val_accuracy" with linespoints ls 1 title 'fp32', \
     amp using "epoch":"val_accuracy" with linespoints ls 2 title 'fp16 + loss scaler', \
     noscale using "epoch":"val_accuracy" with linespoints ls 3 title 'fp16, scale 1', \
     bf16 using "epoch":"val_accuracy" with linespoints ls 4 title 'bf16'
unset multiplot
