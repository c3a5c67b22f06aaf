library(testthat)
library(credence)
test_check("credence")
