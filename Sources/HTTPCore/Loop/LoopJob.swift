/// A job for the loop thread: a task's, or an actor's (run isolated to it).
enum LoopJob {
    case task(UnownedJob)
    case actor(UnownedJob)
}
