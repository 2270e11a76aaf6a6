/* policy_impl.h — what policy.c (reading the policy) and policy_query.c
 * (answering from it) share: the orders the clearances and the routes are
 * sorted in, for qsort when loading and bsearch when asked. */
#ifndef GL_POLICY_IMPL_H
#define GL_POLICY_IMPL_H

/* struct gl_policy_clearance by name; struct gl_policy_route by host. */
int gl_policy_by_name(const void *a, const void *b);
int gl_policy_by_host(const void *a, const void *b);

#endif
