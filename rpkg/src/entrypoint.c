// Registers the Rust routines; the panic hook keeps caught panics (R errors) off stderr.
#include <Rinternals.h>
#include <R_ext/Utils.h>

void R_init_credence_extendr(void *dll);
void register_extendr_panic_hook(void);

void R_init_credence(void *dll) {
    register_extendr_panic_hook();
    R_init_credence_extendr(dll);
}

static void check_interrupt(void *data) {
    (void) data;
    R_CheckUserInterrupt();
}

// 1 when the user has pressed Ctrl-C (R's interrupt is then consumed). The long fits of the
// Rust glue call it on R's main thread while their work runs on another: R_CheckUserInterrupt
// would longjmp on an interrupt, and R_ToplevelExec stops that jump here, in C, so it never
// crosses a Rust frame.
int credence_interrupt_pending(void) {
    return R_ToplevelExec(check_interrupt, NULL) == FALSE;
}
