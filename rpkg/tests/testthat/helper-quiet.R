# No progress lines from the tests' fits and plans (they show once work runs over a second);
# test-interrupt.R turns them on where it checks them.
options(credence.progress = FALSE)
