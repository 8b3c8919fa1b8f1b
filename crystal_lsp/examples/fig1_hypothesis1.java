import java.util.Scanner;
public class Main {
    public static void main(String argv[] ) {
        int num_of_tests = 0;
        Scanner in = new Scanner(System.in);
        num_of_tests= Integer.parseInt(in.nextLine());
        for(int i=0; i<num_of_tests; i++ ) {
            StringBuilder rev_str = new StringBuilder(in.nextLine());
            System.out.println( rev_str.reverse ());
        }
    }
}
