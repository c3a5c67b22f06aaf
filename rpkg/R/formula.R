# Formula and family parsing for credence_fit (internal). Only the models of the core are
# accepted; anything else is an error that names the unsupported term.

unsupported <- function(what, term, hint) {
  stop("credence_fit: unsupported ", what, " '", term, "'; ", hint, call. = FALSE)
}

# Splits an expression on top-level `+` into its terms.
split_plus <- function(e) {
  if (is.call(e) && identical(e[[1]], as.name("+")) && length(e) == 3) {
    c(split_plus(e[[2]]), split_plus(e[[3]]))
  } else {
    list(e)
  }
}

rhs_hint <- paste0("the right-hand side must be 'method' or 'method + (1 | realization)', ",
                   "optionally + (1 | dataset:method) for the model across data sets")

# Parses `y ~ method`, `y ~ method + (1 | realization)` and `k | trials(n) ~ method (+ ...)`;
# `+ (1 | dataset:method)` (a method-by-data-set interaction) asks for the model across data
# sets, whose realizations may also be written `(1 | dataset:realization)` (nested in their data
# set, as they always are there). `(1 | realization/train_rep)` names repeated trainings within a
# realization (their means are fitted). Returns list(response, trials, group, pair, dataset,
# training).
parse_credence_formula <- function(formula) {
  if (!inherits(formula, "formula") || length(formula) != 3) {
    stop("credence_fit: formula must be two-sided, e.g. crps ~ method + (1 | realization)", call. = FALSE)
  }
  lhs <- formula[[2]]
  trials <- NULL
  if (is.call(lhs) && identical(lhs[[1]], as.name("|"))) {
    add <- lhs[[3]]
    if (!(is.call(add) && identical(add[[1]], as.name("trials")) && length(add) == 2 && is.name(add[[2]]))) {
      unsupported("response term", deparse1(add), "only 'trials(column)' may follow '|' on the left-hand side")
    }
    trials <- as.character(add[[2]])
    lhs <- lhs[[2]]
  }
  if (!is.name(lhs)) {
    unsupported("response", deparse1(lhs), "the response must be a column name (transform the data beforehand)")
  }
  group <- NULL
  pair <- NULL
  training <- NULL
  item <- NULL
  interactions <- list()
  for (t in split_plus(formula[[3]])) {
    if (is.name(t)) {
      if (!is.null(group)) unsupported("term", deparse1(t), paste0("only one method term is allowed (", group, " already given)"))
      group <- as.character(t)
    } else if (is.call(t) && identical(t[[1]], as.name("(")) && is.call(t[[2]]) && identical(t[[2]][[1]], as.name("|"))) {
      re <- t[[2]]
      nested <- is.call(re[[3]]) && identical(re[[3]][[1]], as.name(":")) && length(re[[3]]) == 3 &&
        is.name(re[[3]][[2]]) && is.name(re[[3]][[3]])
      # (1 | realization/train_rep): repeated trainings within a realization.
      within <- is.call(re[[3]]) && identical(re[[3]][[1]], as.name("/")) && length(re[[3]]) == 3 &&
        is.name(re[[3]][[2]]) && is.name(re[[3]][[3]])
      if (!(identical(re[[2]], 1) || identical(re[[2]], 1L)) || !(is.name(re[[3]]) || nested || within)) {
        unsupported("term", deparse1(t), paste0("the group-level terms are (1 | realization), a realization ",
                                                "intercept, (1 | realization/train_rep), repeated trainings within ",
                                                "a realization, and (1 | dataset:method), the method-by-data-set interaction"))
      }
      if (within) {
        if (!is.null(pair)) unsupported("term", deparse1(t), "only one realization term is allowed")
        pair <- as.character(re[[3]][[2]])
        training <- as.character(re[[3]][[3]])
        next
      }
      if (nested) {
        interactions[[length(interactions) + 1]] <- list(names = c(as.character(re[[3]][[2]]),
                                                                   as.character(re[[3]][[3]])), term = t)
        next
      }
      # (1 | realization) + (1 | item): the second single term names the test item of per-item scores.
      if (!is.null(pair)) {
        if (!is.null(item) || !is.null(training)) {
          unsupported("term", deparse1(t), "one realization term and at most one item term are allowed")
        }
        item <- as.character(re[[3]])
        next
      }
      pair <- as.character(re[[3]])
    } else {
      unsupported("term", deparse1(t), rhs_hint)
    }
  }
  if (is.null(group)) stop("credence_fit: the formula needs a method term, e.g. crps ~ method", call. = FALSE)
  # (1 | dataset:method) names the data set column; any other a:b term must be
  # (1 | dataset:realization), the realizations nested in their data set.
  dataset <- NULL
  for (x in interactions) {
    if (group %in% x$names) {
      if (!is.null(dataset)) unsupported("term", deparse1(x$term), "only one (1 | dataset:method) term is allowed")
      other <- setdiff(x$names, group)
      if (length(other) != 1) unsupported("term", deparse1(x$term), "expected (1 | dataset:method)")
      dataset <- other
    }
  }
  for (x in interactions) {
    if (group %in% x$names) next
    if (is.null(dataset) || !dataset %in% x$names || length(setdiff(x$names, dataset)) != 1) {
      unsupported("term", deparse1(x$term), paste0("an interaction term is (1 | dataset:", group, ") or, with it, ",
                                                   "(1 | dataset:realization)"))
    }
    if (!is.null(pair)) unsupported("term", deparse1(x$term), "only one realization term is allowed")
    pair <- setdiff(x$names, dataset)
  }
  if (!is.null(item) && !is.null(dataset)) {
    stop("credence_fit: (1 | ", item, "): the model across data sets takes one value per data set, method and ",
         "realization; fit each data set's items on its own", call. = FALSE)
  }
  if (!is.null(training) && !is.null(dataset)) {
    stop("credence_fit: (1 | ", pair, "/", training, "): the model across data sets takes one value per data set, ",
         "method and realization; average the trainings first", call. = FALSE)
  }
  list(response = as.character(lhs), trials = trials, group = group, pair = pair, dataset = dataset,
       training = training, item = item)
}

# TRUE for a shared sigma (`~ 1`), FALSE for one per method (`~ method`).
parse_sigma_formula <- function(sigma, group) {
  if (!inherits(sigma, "formula") || length(sigma) != 2) {
    stop("credence_fit: sigma must be a one-sided formula, ~ 1 or ~ ", group, call. = FALSE)
  }
  rhs <- sigma[[2]]
  if (identical(rhs, 1) || identical(rhs, 1L)) return(TRUE)
  if (is.name(rhs) && as.character(rhs) %in% c(group, "method")) return(FALSE)
  unsupported("sigma term", deparse1(rhs), paste0("sigma must be ~ 1 (shared) or ~ ", group, " (one per method)"))
}

#' @title Beta-binomial family for coverage counts
#'
#' @description A family object (brms style) for \code{covered | trials(n) ~ method} in
#' \code{\link{credence_fit}}: the count of covered test points out of \code{n}, with
#' \eqn{logit(p_m)} hierarchical across methods and a precision \eqn{\phi}.
#' @param link Link of the mean; only \code{"logit"}.
#' @param link_phi Link of the precision; only \code{"log"} (the core samples \eqn{\log\phi}).
#' @return A list of class \code{c("brmsfamily", "family")} with \code{family = "beta_binomial"}.
#' @examples
#' beta_binomial()
#' @export
beta_binomial <- function(link = "logit", link_phi = "log") {
  if (!identical(link, "logit") || !identical(link_phi, "log")) {
    stop("beta_binomial: the model has links mu = logit and phi = log only", call. = FALSE)
  }
  structure(list(family = "beta_binomial", link = link, link_phi = link_phi), class = c("brmsfamily", "family"))
}

# Family object, function or string -> "gaussian" or "beta_binomial".
resolve_family <- function(family) {
  if (is.function(family)) family <- family()
  name <- if (is.character(family) && length(family) == 1) family else if (is.list(family)) family$family else NULL
  if (is.null(name)) stop("credence_fit: family must be gaussian(), beta_binomial() or their names", call. = FALSE)
  name <- sub("-", "_", tolower(name), fixed = TRUE)
  if (!name %in% c("gaussian", "beta_binomial")) {
    stop("credence_fit: unsupported family '", name, "'; expected gaussian or beta_binomial", call. = FALSE)
  }
  link <- if (is.list(family)) family$link else NULL
  if (name == "gaussian" && !is.null(link) && !identical(link, "identity")) {
    stop("credence_fit: unsupported link '", link, "' for gaussian; only identity", call. = FALSE)
  }
  name
}
