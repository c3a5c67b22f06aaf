// Registers the Rust routines; the panic hook keeps caught panics (R errors) off stderr.
void R_init_credence_extendr(void *dll);
void register_extendr_panic_hook(void);

void R_init_credence(void *dll) {
    register_extendr_panic_hook();
    R_init_credence_extendr(dll);
}
