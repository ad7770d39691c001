// attack: an endless loop in task 2
// lab: 01
// base: skeleton
// file: logreg.c
// inject: logreg_loss_grad_cpu
// paths: grade
// lose: all
// expect: wall-clock limit|CPU time limit
// multiplier: 0.1
static void ddplab_attack(void)
{
    for (volatile unsigned long k = 0;; k++)
        ;
}
