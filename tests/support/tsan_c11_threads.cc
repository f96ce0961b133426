// Linked into the test programs of the ThreadSanitizer build only (SLUICE_TSAN).
//
// librdkafka makes its threads, locks and condition variables with C11 <threads.h>. glibc
// implements those by calling its internal pthread functions directly, past ThreadSanitizer's
// interceptors, so TSan neither knows librdkafka's threads (its allocator crashes in them) nor
// sees their locks (every hand-over through librdkafka would look like a race). Defined here, in
// the executable, these take precedence over glibc's for librdkafka's calls, and go through the
// pthread functions TSan intercepts. glibc's C11 types are layout-compatible with pthread's.

#include <pthread.h>
#include <threads.h>

#include <cerrno>
#include <cstdint>

namespace {

struct Start {
  thrd_start_t function;
  void* argument;
};

void* run_start(void* start) {
  const Start s = *static_cast<Start*>(start);
  delete static_cast<Start*>(start);
  return reinterpret_cast<void*>(static_cast<intptr_t>(s.function(s.argument)));
}

int c11_result(int error) {
  switch (error) {
    case 0: return thrd_success;
    case ENOMEM: return thrd_nomem;
    case ETIMEDOUT: return thrd_timedout;
    case EBUSY: return thrd_busy;
    default: return thrd_error;
  }
}

pthread_mutex_t* as_pthread(mtx_t* m) { return reinterpret_cast<pthread_mutex_t*>(m); }
pthread_cond_t* as_pthread(cnd_t* c) { return reinterpret_cast<pthread_cond_t*>(c); }

}  // namespace

extern "C" {

int thrd_create(thrd_t* thread, thrd_start_t function, void* argument) {
  auto* start = new Start{function, argument};
  const int error = pthread_create(reinterpret_cast<pthread_t*>(thread), nullptr, &run_start, start);
  if (error) delete start;
  return c11_result(error);
}

int thrd_join(thrd_t thread, int* result) {
  void* returned = nullptr;
  const int error = pthread_join(thread, &returned);
  if (!error && result) *result = static_cast<int>(reinterpret_cast<intptr_t>(returned));
  return c11_result(error);
}

int thrd_detach(thrd_t thread) { return c11_result(pthread_detach(thread)); }

int mtx_init(mtx_t* mutex, int type) {
  pthread_mutexattr_t attributes;
  pthread_mutexattr_init(&attributes);
  if (type & mtx_recursive) pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_RECURSIVE);
  const int error = pthread_mutex_init(as_pthread(mutex), &attributes);
  pthread_mutexattr_destroy(&attributes);
  return c11_result(error);
}
int mtx_lock(mtx_t* mutex) { return c11_result(pthread_mutex_lock(as_pthread(mutex))); }
int mtx_trylock(mtx_t* mutex) { return c11_result(pthread_mutex_trylock(as_pthread(mutex))); }
int mtx_timedlock(mtx_t* mutex, const struct timespec* until) {
  return c11_result(pthread_mutex_timedlock(as_pthread(mutex), until));
}
int mtx_unlock(mtx_t* mutex) { return c11_result(pthread_mutex_unlock(as_pthread(mutex))); }
void mtx_destroy(mtx_t* mutex) { pthread_mutex_destroy(as_pthread(mutex)); }

int cnd_init(cnd_t* condition) { return c11_result(pthread_cond_init(as_pthread(condition), nullptr)); }
int cnd_signal(cnd_t* condition) { return c11_result(pthread_cond_signal(as_pthread(condition))); }
int cnd_broadcast(cnd_t* condition) { return c11_result(pthread_cond_broadcast(as_pthread(condition))); }
int cnd_wait(cnd_t* condition, mtx_t* mutex) {
  return c11_result(pthread_cond_wait(as_pthread(condition), as_pthread(mutex)));
}
int cnd_timedwait(cnd_t* condition, mtx_t* mutex, const struct timespec* until) {
  return c11_result(pthread_cond_timedwait(as_pthread(condition), as_pthread(mutex), until));
}
void cnd_destroy(cnd_t* condition) { pthread_cond_destroy(as_pthread(condition)); }

void call_once(once_flag* flag, void (*function)(void)) {
  pthread_once(reinterpret_cast<pthread_once_t*>(flag), function);
}

}  // extern "C"
