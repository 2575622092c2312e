-- nothing here
/* still nothing */
