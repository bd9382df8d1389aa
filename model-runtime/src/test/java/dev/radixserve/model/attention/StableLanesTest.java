package dev.radixserve.model.attention;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;
import org.junit.jupiter.api.Test;

/**
 * The vector sum and exp give their scalar twins' bits, for as long as it takes the JIT to
 * compile the loop that calls them (hundreds of thousands of calls), and exp is close to e^x.
 */
class StableLanesTest {

  private static final int CALLS = 400_000;

  @Test
  void sumIsTheScalarTreeInEveryTier() {
    for (VectorSpecies<Float> sp : new VectorSpecies[] {FloatVector.SPECIES_128,
        FloatVector.SPECIES_256}) {
      Random random = new Random(7);
      float[] lanes = new float[sp.length()];
      for (int call = 0; call < CALLS; call++) {
        for (int i = 0; i < lanes.length; i++) {
          // magnitudes 1 .. 2^20 apart, so that a different order gives different bits
          lanes[i] = (float) random.nextGaussian() * (1 << random.nextInt(20));
        }
        float got = StableLanes.sum(FloatVector.fromArray(sp, lanes, 0));
        if (Float.floatToIntBits(got) != Float.floatToIntBits(StableLanes.sum(lanes))) {
          assertEquals(StableLanes.sum(lanes), got, "call " + call + " of " + sp);
        }
      }
    }
  }

  @Test
  void scalarTreeAddsHalvesFirst() {
    float[] a = {1e8f, 3f, 5f, 7f, -1e8f, 11f, 13f, 17f};
    // ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)) = (0 + 18) + (14 + 24): exact, unlike a left fold
    assertEquals(56f, StableLanes.sum(a));
  }

  @Test
  void expIsTheScalarTwinInEveryTierAndCloseToMathExp() {
    VectorSpecies<Float> sp = FloatVector.SPECIES_256;
    Random random = new Random(11);
    float[] x = new float[sp.length()];
    float[] e = new float[sp.length()];
    for (int call = 0; call < CALLS / 8; call++) {
      for (int i = 0; i < x.length; i++) {
        x[i] = -100f * random.nextFloat() + (i == 0 ? 1f : 0f);
      }
      StableLanes.exp(FloatVector.fromArray(sp, x, 0)).intoArray(e, 0);
      for (int i = 0; i < x.length; i++) {
        float twin = StableLanes.exp(x[i]);
        if (Float.floatToIntBits(e[i]) != Float.floatToIntBits(twin)) {
          assertEquals(twin, e[i], "exp(" + x[i] + ") at call " + call);
        }
        double exact = Math.exp(x[i]);
        if (x[i] >= -87.33f) { // above the clamp
          assertTrue(Math.abs(twin - exact) <= 3 * Math.ulp((float) exact),
              "exp(" + x[i] + ") = " + twin + ", not " + exact);
        } else {
          assertTrue(twin >= 0 && twin < 1.2e-38f, "exp(" + x[i] + ") = " + twin); // ~ 0
        }
      }
    }
  }

  @Test
  void expAtTheEdges() {
    assertEquals(1f, StableLanes.exp(0f));
    assertEquals(1f, StableLanes.exp(-0f));
    assertTrue(StableLanes.exp(Float.NEGATIVE_INFINITY) < 1.2e-38f);
    assertTrue(Float.isNaN(StableLanes.exp(Float.NaN)));
    float[] x = {0f, -0f, Float.NEGATIVE_INFINITY, Float.NaN, -1f, -87.4f, 1f, 88f};
    float[] e = new float[8];
    StableLanes.exp(FloatVector.fromArray(FloatVector.SPECIES_256, x, 0)).intoArray(e, 0);
    for (int i = 0; i < x.length; i++) {
      assertEquals(StableLanes.exp(x[i]), e[i], "exp(" + x[i] + ")");
    }
    assertEquals(Math.exp(88), StableLanes.exp(88f), Math.ulp((float) Math.exp(88)) * 3);
  }
}
