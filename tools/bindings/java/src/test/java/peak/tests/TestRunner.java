package peak.tests;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Runs the {@link Test} methods of the classes named on the command line, each on a new instance,
 * in name order; prints each result and "N passed, N failed"; exits 1 when one failed.
 */
public final class TestRunner {
  private TestRunner() {}

  public static void main(String[] args) throws Exception {
    int passed = 0;
    int failed = 0;
    for (String name : args) {
      Class<?> cls = Class.forName(name);
      List<Method> tests = new ArrayList<>();
      for (Method m : cls.getMethods()) {
        if (m.isAnnotationPresent(Test.class)) tests.add(m);
      }
      tests.sort(Comparator.comparing(Method::getName));
      if (tests.isEmpty()) throw new IllegalStateException(name + " has no @Test method");
      for (Method m : tests) {
        String label = cls.getSimpleName() + "." + m.getName();
        long start = System.nanoTime();
        try {
          m.invoke(cls.getDeclaredConstructor().newInstance());
          ++passed;
          System.out.printf("PASS %s (%.2f s)%n", label, (System.nanoTime() - start) * 1e-9);
        } catch (InvocationTargetException e) {
          ++failed;
          System.out.printf("FAIL %s%n", label);
          e.getCause().printStackTrace(System.out);
        }
        System.out.flush();
      }
    }
    System.out.println(passed + " passed, " + failed + " failed");
    System.exit(failed == 0 ? 0 : 1);
  }
}
