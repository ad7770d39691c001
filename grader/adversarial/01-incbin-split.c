// attack: the reference, embedding a file outside the submission with an .incbin whose text is split across string literals (no "incbin" in the source)
// lab: 01
// base: reference
// file: scaler.c
// lose: all
// status: embeds-a-file
// expect: refused \[embeds-a-file\].*\.incbin
__asm__(".pushsection .rodata\n.globl ddplab_blob\nddplab_blob:\n.inc"
        "bin \"@KIT@/solu"
        "tions/01-logreg/scaler.c\"\n.popsection");
